variable "name" {
  type = string
}

resource "null_resource" "zone" {
  triggers = {
    name = var.name
  }
}

output "name" {
  value = null_resource.zone.triggers.name
}
