terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "note" {
  type    = string
  default = "first"
}

resource "null_resource" "stable" {
  triggers = {
    note = var.note
  }

  lifecycle {
    ignore_changes = [triggers]
  }
}

output "note" {
  value = null_resource.stable.triggers.note
}
