const port = 8080;
listen(port);
