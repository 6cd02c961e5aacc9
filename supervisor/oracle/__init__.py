"""The oracle: the workspace's outputs compared against reference outputs, with tolerances."""
