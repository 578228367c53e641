terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "users" {
  type = map(object({
    role  = string
    admin = bool
  }))
  default = {
    ana  = { role = "dev", admin = false }
    ben  = { role = "ops", admin = true }
    cleo = { role = "dev", admin = false }
  }
}

resource "null_resource" "user" {
  for_each = var.users

  triggers = {
    name = each.key
    role = each.value.role
  }
}

output "admins" {
  value = [for name, u in var.users : name if u.admin]
}

output "roles" {
  value = { for name, r in null_resource.user : name => r.triggers.role }
}
