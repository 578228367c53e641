variable "name" {
  type = string
}

resource "null_resource" "this" {
  triggers = {
    name = var.name
  }
}

module "subnet" {
  source = "../subnet"
  name   = "${var.name}-subnet"
}

output "chain" {
  value = concat([var.name], module.subnet.chain)
}
