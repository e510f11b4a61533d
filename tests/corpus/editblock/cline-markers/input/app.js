const port = 80;
listen(port);
