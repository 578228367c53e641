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
  type = string
}

variable "size" {
  type    = string
  default = "small"
}

variable "replicas" {
  type    = number
  default = 1
}

resource "null_resource" "app" {
  count = var.replicas

  triggers = {
    name = var.name
    size = var.size
  }
}

output "summary" {
  value = "${var.name}/${var.size}/${var.replicas}"
}
