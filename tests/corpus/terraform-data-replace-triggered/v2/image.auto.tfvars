image = "app:2"
