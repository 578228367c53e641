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
  cidr     = "10.0.0.0/16"
  subnets  = [for i in range(3) : cidrsubnet(local.cidr, 8, i)]
  merged   = merge({ a = 1, b = 2 }, { b = 3, c = 4 })
  zipped   = zipmap(["x", "y"], [1, 2])
  flat     = flatten([[1, 2], [], [3, [4]]])
  distinct = distinct(["a", "b", "a"])
  lookup   = lookup(local.merged, "z", "none")
  formatted = format("%s-%03d", "node", 7)
  replaced  = replace("a.b.c", ".", "/")
  b64       = base64encode("hello")
  coalesced = coalesce("", "fallback")
}

resource "null_resource" "fn" {
  triggers = {
    subnets = join(",", local.subnets)
  }
}

output "results" {
  value = {
    subnets   = local.subnets
    merged    = local.merged
    zipped    = local.zipped
    flat      = local.flat
    distinct  = local.distinct
    lookup    = local.lookup
    formatted = local.formatted
    replaced  = local.replaced
    b64       = local.b64
    coalesced = local.coalesced
  }
}
