resource "terraform_data" "migrate" {
  triggers_replace = ["schema-v3"]

  provisioner "local-exec" {
    command = "echo migrating && exit 2"
  }
}
