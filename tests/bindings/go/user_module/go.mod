module example.com/serve

go 1.19

require github.com/libmrt/mrt-go v0.1.0
