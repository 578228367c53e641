terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "enabled" {
  type    = bool
  default = false
}

resource "null_resource" "optional" {
  count = var.enabled ? 1 : 0
}

output "optional_id" {
  value = one(null_resource.optional[*].id)
}
