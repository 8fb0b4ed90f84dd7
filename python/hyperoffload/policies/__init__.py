"""
The policies that compete on the simulator, above the planner they may
use: the peers of a step (`peers.py`), decode generations under each KV
policy (`generation.py`, `generation_topk.py`) and routed-expert decode under
each expert policy with its caches (`experts.py`, `expert_caches.py`), ours
among them.
"""
