# Thin aliases over ./brainctl, for those who reach for make.
.PHONY: run test stop
run:
	./brainctl run
test:
	./brainctl test
stop:
	./brainctl stop
