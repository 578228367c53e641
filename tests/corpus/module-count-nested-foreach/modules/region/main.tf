variable "index" {
  type = number
}

variable "zones" {
  type = list(string)
}

module "zone" {
  source   = "../zone"
  for_each = toset(var.zones)

  name = "r${var.index}-${each.key}"
}

output "zones" {
  value = [for z in module.zone : z.name]
}
