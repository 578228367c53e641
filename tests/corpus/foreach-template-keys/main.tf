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
  # keys holding a template opener, a directive opener, a quote, a backslash, a tab and
  # letters beyond ASCII: Terraform >= 1.11 prints them as HCL quotes them (`$${`, `%%{`),
  # older engines as Go's %q does
  keys = toset(["$${env}-a", "%%{if}", "say \"hi\"", "C:\\temp", "tab\there", "ünï€"])
}

resource "null_resource" "k" {
  for_each = local.keys

  triggers = {
    key = each.key
  }
}

output "keys" {
  value = sort(keys(null_resource.k))
}
