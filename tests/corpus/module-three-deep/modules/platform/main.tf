variable "name" {
  type = string
}

resource "null_resource" "this" {
  triggers = {
    name = var.name
  }
}

module "network" {
  source = "../network"
  name   = "${var.name}-network"
}

output "chain" {
  value = concat([var.name], module.network.chain)
}
