"""Defines drgrpo_advantages correctly but forgets drgrpo_loss."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError("bad group size")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)
