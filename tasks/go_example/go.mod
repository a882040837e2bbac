module portexample

go 1.19
