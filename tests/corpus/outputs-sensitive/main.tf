terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "secret" {
  triggers = {
    token = "not-really-secret"
  }
}

output "token" {
  value     = null_resource.secret.triggers.token
  sensitive = true
}

output "config" {
  value = {
    host = "db.internal"
    port = 5432
  }
  sensitive = true
}

output "public" {
  value = "visible"
}
