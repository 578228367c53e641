terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "a" {}

resource "null_resource" "b" {
  triggers = {
    a = null_resource.a.id
  }
}

output "b_follows_a" {
  value = null_resource.b.triggers.a == null_resource.a.id
}
