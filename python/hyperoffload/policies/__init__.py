"""
The policies that compete on the simulator, above the planner they may
use: routed-expert decode under each expert policy, ours among them
(`experts.py`).
"""
