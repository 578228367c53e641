terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

locals {
  env = terraform.workspace
  sizes = {
    default = 1
    staging = 2
  }
}

resource "null_resource" "node" {
  count = lookup(local.sizes, local.env, 1)

  triggers = {
    env = local.env
  }
}

output "workspace" {
  value = terraform.workspace
}
