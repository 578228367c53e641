terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "r" {
  triggers = {
    region = var.region
    secret = sha256(var.token)
  }
}

output "region" {
  value = var.region
}

output "token" {
  value     = var.token
  sensitive = true
}
