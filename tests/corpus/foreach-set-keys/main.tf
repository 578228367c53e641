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
  files = toset(["a.txt", "b/c.txt", "with space.md", "ünïcode.txt"])
}

resource "null_resource" "file" {
  for_each = local.files

  triggers = {
    path = each.value
  }
}

output "keys" {
  value = sort(keys(null_resource.file))
}
