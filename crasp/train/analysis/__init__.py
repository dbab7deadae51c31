"""Analyses of a finished training run (``crasp analyze``), one module per job.

* ``loading``    a run directory -> its model (best weights) and its test bins
* ``ablation``   head outputs replaced by their mean or by zero (hooks on ``attn.o``);
                 per-head/per-layer accuracy drops, head scores, the pruning curve
* ``paths``      ablation of one path head a (layer l) -> head b (layer l + 1)
* ``depth``      the effective depth: fewest attention layers that keep the run's success
* ``hessian``    the loss Hessian over the attention and feed-forward weight blocks
* ``plots``      PNG figures; ``outputs`` the guarded output directory
"""
