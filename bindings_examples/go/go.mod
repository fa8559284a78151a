module mrt.example/mlp

go 1.19
