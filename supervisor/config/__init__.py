"""The nightshift.toml schema: every section (agent, backend, limits, verify, oracle, judge, slurm, notify) and
the loader whose errors name the file, the line and the key. Data only: no behaviour of the sections lives here.

May import: errors.
"""

CONFIG_NAME = "nightshift.toml"  # here, not in schema.py: naming the file must not load pydantic
