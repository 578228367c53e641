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
  names = ["alpha", "beta", "gamma"]
}

resource "null_resource" "node" {
  count = length(local.names)

  triggers = {
    name = local.names[count.index]
  }
}

output "names" {
  value = null_resource.node[*].triggers.name
}

output "first" {
  value = null_resource.node[0].triggers.name
}
