terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "suffix" {
  type    = string
  default = "none"
}

resource "null_resource" "named" {
  triggers = {
    suffix = var.suffix
  }
}

output "suffix" {
  value = var.suffix
}
