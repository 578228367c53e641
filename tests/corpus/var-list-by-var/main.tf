terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "subnets" {
  type        = list(string)
  description = "Subnet CIDRs."
  default     = []
}

resource "null_resource" "subnet" {
  count = length(var.subnets)

  triggers = {
    cidr = var.subnets[count.index]
  }
}

output "subnets" {
  value = var.subnets
}
