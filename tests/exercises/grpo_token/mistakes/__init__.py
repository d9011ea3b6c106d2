"""Wrong submissions of the GRPO token objective exercise, one mistake each, in the catalogue's
form (``NAME``, ``TARGET``, ``CAUGHT_BY``, ``FIX``): each must lose the checks it names."""
