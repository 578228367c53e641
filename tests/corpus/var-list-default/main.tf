terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "zones" {
  type    = list(string)
  default = ["a", "b", "c"]
}

resource "null_resource" "zone" {
  for_each = toset(var.zones)

  triggers = {
    zone = each.value
  }
}

output "zones" {
  value = sort([for z in null_resource.zone : z.triggers.zone])
}
