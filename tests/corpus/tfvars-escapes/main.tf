terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "policy_path" {
  type = string
}

variable "template" {
  type = string
}

resource "null_resource" "policy" {
  triggers = {
    path = var.policy_path
  }
}

output "policy_path" {
  value = var.policy_path
}

output "template" {
  value = var.template
}
