"""hybridops-tf: honest operation records around OpenTofu/Terraform apply and destroy."""

__version__ = "0.1.0"
