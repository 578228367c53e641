terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "db_password" {
  type      = string
  sensitive = true
}

variable "db_user" {
  type    = string
  default = "admin"
}

resource "null_resource" "db" {
  triggers = {
    user     = var.db_user
    password = sha256(var.db_password)
  }
}

output "password" {
  value     = var.db_password
  sensitive = true
}

output "user" {
  value = var.db_user
}
