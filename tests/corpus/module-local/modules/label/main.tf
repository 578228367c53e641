terraform {
  required_providers {
    null = {
      source = "hashicorp/null"
    }
  }
}

variable "namespace" {
  type = string
}

variable "stage" {
  type = string
}

variable "name" {
  type = string
}

variable "delimiter" {
  type    = string
  default = "-"
}

locals {
  id = join(var.delimiter, compact([var.namespace, var.stage, var.name]))
}

resource "null_resource" "label" {
  triggers = {
    id = local.id
  }
}

output "id" {
  value = local.id
}

output "tags" {
  value = {
    Name      = local.id
    Namespace = var.namespace
    Stage     = var.stage
  }
}
