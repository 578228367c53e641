terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "database" {}

resource "null_resource" "app" {
  depends_on = [null_resource.database]
}

resource "null_resource" "unrelated" {}
