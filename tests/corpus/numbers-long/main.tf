terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "one" {
  type        = number
  description = "A number with more digits than a 64-bit float keeps."
}

variable "many" {
  type        = list(number)
  description = "Long decimals, a huge exponent and an integer past 2^53."
}

variable "loose" {
  type    = any
  default = null
}

variable "env_one" {
  type    = number
  default = 0
}

resource "null_resource" "this" {
  triggers = {
    one   = var.one
    first = var.many[0]
  }
}

output "one" {
  value = var.one
}

output "many" {
  value = var.many
}

output "loose" {
  value = var.loose
}

output "env_one" {
  value = var.env_one
}

output "next" {
  value = var.one + 1
}
