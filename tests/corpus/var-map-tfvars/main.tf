terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "tags" {
  type = map(string)
  default = {
    owner = "platform"
  }
}

variable "sizes" {
  type    = map(number)
  default = {}
}

resource "null_resource" "tagged" {
  triggers = merge(var.tags, { count = length(var.sizes) })
}

output "tags" {
  value = var.tags
}

output "total" {
  value = sum(concat([0], values(var.sizes)))
}
