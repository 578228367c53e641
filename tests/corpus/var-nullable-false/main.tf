terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "name" {
  type     = string
  nullable = false
  default  = "fallback"
}

variable "comment" {
  type    = string
  default = "kept"
}

resource "null_resource" "named" {
  triggers = {
    name = var.name
  }
}

output "name" {
  value = var.name
}

output "comment" {
  value = var.comment
}
