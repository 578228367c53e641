terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "settings" {
  type = any
  default = {
    retries = 3
    hosts   = ["a", "b"]
    extra   = { debug = false }
  }
}

resource "null_resource" "settings" {
  triggers = {
    retries = var.settings.retries
  }
}

output "settings" {
  value = var.settings
}

output "hosts" {
  value = var.settings.hosts
}
