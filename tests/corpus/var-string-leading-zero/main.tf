terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "zip_code" {
  type = string
}

variable "build" {
  type    = string
  default = "1.0"
}

resource "null_resource" "address" {
  triggers = {
    zip   = var.zip_code
    build = var.build
  }
}

output "zip_code" {
  value = var.zip_code
}

output "build" {
  value = var.build
}
