variable "revision" {
  type    = number
  default = 1
}

resource "terraform_data" "build" {
  input = {
    revision = var.revision
    files    = ["a.zip", "b.zip"]
  }
}

output "build" {
  value = terraform_data.build.output
}
