terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "pattern" {
  type = string
}

variable "tags" {
  type = map(string)
}

resource "null_resource" "pattern" {
  triggers = {
    pattern = var.pattern
  }
}

output "pattern" {
  value = var.pattern
}

output "tags" {
  value = var.tags
}
