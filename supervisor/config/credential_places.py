"""The credential places in $HOME that no process of the agent may read by default (``[policy] deny_read`` adds,
``allow_read`` takes one away). A leaf without pydantic: the sandbox reads it in `nightshift compare`, which must
start without loading the validated config models.
"""
from __future__ import annotations

# Where a user keeps what signs, pushes or pays as them. Folders and files under $HOME.
CREDENTIAL_PLACES = ("~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gcloud", "~/.azure", "~/.config/gh", "~/.config/hub",
                     "~/.config/glab-cli", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
                     "~/.docker", "~/.kube", "~/.pypirc", "~/.npmrc", "~/.cargo/credentials",
                     "~/.cargo/credentials.toml", "~/.password-store", "~/.local/share/keyrings", "~/.vault-token",
                     "~/.terraform.d/credentials.tfrc.json", "~/.oci", "~/.s3cfg", "~/.boto", "~/.config/rclone",
                     "~/.cache/huggingface/token", "~/.huggingface/token", "~/.config/doctl", "~/.kaggle")
