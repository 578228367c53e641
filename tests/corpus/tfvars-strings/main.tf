terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "motd" {
  type = string
}

variable "quoted" {
  type = string
}

variable "unicode" {
  type = string
}

resource "null_resource" "motd" {
  triggers = {
    length = length(var.motd)
  }
}

output "motd" {
  value = var.motd
}

output "quoted" {
  value = var.quoted
}

output "unicode" {
  value = var.unicode
}
