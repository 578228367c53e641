terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

terraform {
  required_version = ">= 99.0.0"
}

resource "null_resource" "never" {}
