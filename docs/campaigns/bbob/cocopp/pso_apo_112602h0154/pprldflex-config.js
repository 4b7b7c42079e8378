
const config = {
	"dimensions": [2, 3, 5, 10, 20, 40],
	"functions": [
		{"name": "1 - Sphere", "filename": "pprldmany-single-functions/pprldmany_f001_<0,2>D.svg"},
		{"name": "2 - Ellipsoid separable", "filename": "pprldmany-single-functions/pprldmany_f002_<0,2>D.svg"},
		{"name": "3 - Rastrigin separable", "filename": "pprldmany-single-functions/pprldmany_f003_<0,2>D.svg"},
		{"name": "4 - Skew Rastrigin-Bueche", "filename": "pprldmany-single-functions/pprldmany_f004_<0,2>D.svg"},
		{"name": "5 - Linear slope", "filename": "pprldmany-single-functions/pprldmany_f005_<0,2>D.svg"},
		{"name": "6 - Attractive sector", "filename": "pprldmany-single-functions/pprldmany_f006_<0,2>D.svg"},
		{"name": "7 - Step-ellipsoid", "filename": "pprldmany-single-functions/pprldmany_f007_<0,2>D.svg"},
		{"name": "8 - Rosenbrock original", "filename": "pprldmany-single-functions/pprldmany_f008_<0,2>D.svg"},
		{"name": "9 - Rosenbrock rotated", "filename": "pprldmany-single-functions/pprldmany_f009_<0,2>D.svg"},
		{"name": "10 - Ellipsoid", "filename": "pprldmany-single-functions/pprldmany_f010_<0,2>D.svg"},
		{"name": "11 - Discus", "filename": "pprldmany-single-functions/pprldmany_f011_<0,2>D.svg"},
		{"name": "12 - Bent cigar", "filename": "pprldmany-single-functions/pprldmany_f012_<0,2>D.svg"},
		{"name": "13 - Sharp ridge", "filename": "pprldmany-single-functions/pprldmany_f013_<0,2>D.svg"},
		{"name": "14 - Sum of different powers", "filename": "pprldmany-single-functions/pprldmany_f014_<0,2>D.svg"},
		{"name": "15 - Rastrigin", "filename": "pprldmany-single-functions/pprldmany_f015_<0,2>D.svg"},
		{"name": "16 - Weierstrass", "filename": "pprldmany-single-functions/pprldmany_f016_<0,2>D.svg"},
		{"name": "17 - Schaffer F7, condition 10", "filename": "pprldmany-single-functions/pprldmany_f017_<0,2>D.svg"},
		{"name": "18 - Schaffer F7, condition 1000", "filename": "pprldmany-single-functions/pprldmany_f018_<0,2>D.svg"},
		{"name": "19 - Griewank-Rosenbrock F8F2", "filename": "pprldmany-single-functions/pprldmany_f019_<0,2>D.svg"},
		{"name": "20 - Schwefel x*sin(x)", "filename": "pprldmany-single-functions/pprldmany_f020_<0,2>D.svg"},
		{"name": "21 - Gallagher 101 peaks", "filename": "pprldmany-single-functions/pprldmany_f021_<0,2>D.svg"},
		{"name": "22 - Gallagher 21 peaks", "filename": "pprldmany-single-functions/pprldmany_f022_<0,2>D.svg"},
		{"name": "23 - Katsuura", "filename": "pprldmany-single-functions/pprldmany_f023_<0,2>D.svg"},
		{"name": "24 - Lunacek bi-Rastrigin", "filename": "pprldmany-single-functions/pprldmany_f024_<0,2>D.svg"},
		{"name": "separable", "filename": "pprldmany_<0,2>D_separ.svg"},
		{"name": "low or moderate condition", "filename": "pprldmany_<0,2>D_lcond.svg"},
		{"name": "high condition", "filename": "pprldmany_<0,2>D_hcond.svg"},
		{"name": "multi-modal", "filename": "pprldmany_<0,2>D_multi.svg"},
		{"name": "multi-modal with weak global structure", "filename": "pprldmany_<0,2>D_mult2.svg"},
		{"name": "all", "filename": "pprldmany_<0,2>D_noiselessall.svg"}
	]
}

