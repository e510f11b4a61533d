package main

func run() {
	if ready {
		start()
	}
}
