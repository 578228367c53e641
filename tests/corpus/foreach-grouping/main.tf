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
  servers = [
    { name = "web1", group = "web" },
    { name = "web2", group = "web" },
    { name = "db1", group = "db" },
  ]
  by_group = { for s in local.servers : s.group => s.name... }
}

resource "null_resource" "group" {
  for_each = local.by_group

  triggers = {
    members = join(",", each.value)
  }
}

output "by_group" {
  value = local.by_group
}
