variable "name" {
  type = string
}

variable "replicas" {
  type = number
}

resource "null_resource" "instance" {
  count = var.replicas

  triggers = {
    name = "${var.name}-${count.index}"
  }
}

output "instance_names" {
  value = null_resource.instance[*].triggers.name
}
