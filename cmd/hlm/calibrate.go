package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/uncertainty"
)

func init() {
	register("calibrate", "fit uncertainty vs rejection (U-HLM Theorem 1) and the offline top-k (CU-HLM eq. 21)", runCalibrate)
}

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := hybrid.DefaultParams()
	fs := newFlags("calibrate", "[--llm SPEC] [--slm SPEC] [--dataset NAME [--dataset-path FILE] | --prompts FILE] [--out FILE.json]", `
Run lossless HLM over prompts (the rounds of hlm sim --method hlm with
--set prob_bits=32 and the same seed and sampling settings), log for every
drafted token the SLM's temperature-perturbation uncertainty u (measured on
a random stream of its own) and the rejection probability
β = max(1 − y_d/x_d, 0), and fit β = a·u + b. Prints a, b, R², MSE, Δ, the
risk-prone and risk-averse thresholds, the rejection risk R and its Hölder
bound next to the measured risk (U-HLM/CU-HLM Theorem 1), and the offline
k* (CU-HLM eq. 21) over every logged token, with k* on each half of the
prompts to show whether it is stable. The numbers feed hlm sim as
--set calib_a=… calib_b=… u_th=… k=…. The prompts of a dataset are held
out from hlm eval's: the end of the seeded shuffle whose start eval
samples, so an eval with the same --seed shares none of them while the
dataset has room for both (it says so, and warns when it has not); with
--prompts, keep them apart yourself.`, stdout)
	mf := addModelFlags(fs)
	pf := addPromptFlags(fs)
	n := fs.Int("n", 30, "number of prompts (a seeded sample of the dataset held out from hlm eval's; 0 or more than it has: all)")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "tokens generated per prompt")
	seed := fs.Uint64("seed", defaultSeed, "random seed")
	theta := fs.Float64("theta", p.Theta, "TVD tolerance θ for the offline k*")
	density := fs.String("density", "kde", "density estimate of u for R: kde or histogram")
	fitOn := fs.String("fit-on", "bins", "regress the mean β per uncertainty value (bins, as the papers' curves) or every token (points)")
	out := fs.String("out", "", "also write the result as JSON to this file")
	threads := threadsFlag(fs, "worker threads (0: all cores)")
	temp := fs.Float64("temperature", p.Temperature, "sampling temperature of both models")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *density != "kde" && *density != "histogram" {
		return usageError{fmt.Errorf("--density %q: want kde or histogram", *density)}
	}
	if *fitOn != "bins" && *fitOn != "points" {
		return usageError{fmt.Errorf("--fit-on %q: want bins or points", *fitOn)}
	}
	if *out != "" {
		if err := checkOutFile(*out); err != nil {
			return usageError{err}
		}
	}
	tensor.SetThreads(*threads)
	p.MaxTokens, p.Seed, p.Temperature = *maxTokens, *seed, *temp
	texts, err := pf.heldOut("calibrate", *n, *seed, stderr)
	if err != nil {
		return err
	}
	ms, err := mf.open(ctx)
	if err != nil {
		return err
	}
	status := statusLine(stderr)
	log, err := sim.Collect(ctx, ms, p, texts, 0, func(d, t int) { status(d, t, fmt.Sprintf("calibrating: prompt %d/%d", d, t)) })
	if err != nil {
		fmt.Fprintln(stderr) // end a status line cut short
		return err
	}
	res, err := sim.Analyze(log, *theta, uncertainty.Options{Density: *density, M: p.M, FitOn: *fitOn})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "LLM %s, SLM %s\n", ms.LLM.Name(), draftName(ms))
	printCalibration(stdout, res)
	if *out == "" {
		return nil
	}
	// The result with what made it, so that a file read later says which
	// pair, prompts and sampling it describes.
	file := struct {
		sim.CalibrationResult
		Source calibrationSource `json:"source"`
	}{res, calibrationSource{LLM: *mf.llm, SLM: draftName(ms), Prompts: len(texts), Dataset: pf.label(), MaxTokens: p.MaxTokens,
		Seed: p.Seed, Temperature: p.Temperature, Theta: *theta, Density: *density, FitOn: *fitOn}}
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, append(b, '\n'), 0o644)
}

// printCalibration prints a calibration: the fit, Δ, Theorem 1's
// thresholds and risk (or why they are undefined), the offline k*, and the
// settings that use them.
func printCalibration(stdout io.Writer, res sim.CalibrationResult) {
	fmt.Fprintf(stdout, "tokens %d: beta = %.4f·u %+.4f (fit on %s: R² %.4f, MSE %.3g)\n", res.N, res.Fit.A, res.Fit.B, res.FitOn, res.Fit.R2, res.Fit.MSE)
	fmt.Fprintf(stdout, "Delta = P(y_d < x_d) = %.4f\n", res.Delta)
	if res.Degenerate {
		fmt.Fprintf(stdout, "WARNING: the slope a = %.4f is not positive: uncertainty does not predict rejection for this pair (U-HLM Remark 1 fails), so Theorem 1's thresholds and risk are undefined; the line below still predicts β for the online k, badly\n", res.Fit.A)
	} else {
		fmt.Fprintf(stdout, "thresholds: risk-prone (Delta-b)/a = %.4f, risk-averse -b/a = %.4f\n", res.RiskProne, res.RiskAverse)
		proneOK, averseOK := res.RiskProne > 0 && res.RiskProne < 1, res.RiskAverse > 0 && res.RiskAverse < 1
		switch {
		case proneOK && averseOK:
			fmt.Fprintf(stdout, "  (the use: line takes the risk-prone threshold, U-HLM's choice: fewer uploads, more risk; --set u_th=%.4f, the risk-averse one, uploads more and risks less)\n", res.RiskAverse)
		case averseOK:
			fmt.Fprintf(stdout, "  (the risk-averse threshold is the one in (0, 1), where u lies: --set u_th=%.4f uploads the drafts above it)\n", res.RiskAverse)
		case proneOK:
			fmt.Fprintf(stdout, "  (the risk-averse threshold is outside (0, 1), where u lies: as u_th it would upload every draft or none)\n")
		}
		fmt.Fprintf(stdout, "rejection risk: measured %.4g; integral R = %.4g (%s density) <= Hölder bound %.4g (the bound holds for any density, by Cauchy–Schwarz)\n", res.EmpiricalRisk, res.Risk, res.Density, res.RiskBound)
	}
	if res.KOffline > 0 {
		fmt.Fprintf(stdout, "offline k* (mean U_TV(k) <= %g over %d tokens) = %d; on each half of the prompts %d and %d\n", res.Theta, res.Pairs, res.KOffline, res.KHalves[0], res.KHalves[1])
	} else {
		fmt.Fprintf(stdout, "offline k*: no k reaches mean U_TV <= %g over %d tokens\n", res.Theta, res.Pairs)
	}
	uth, note := uthAdvice(res.Degenerate, res.RiskProne)
	if note != "" {
		fmt.Fprintln(stdout, note)
	}
	fmt.Fprintf(stdout, "use: --set calib_a=%.4f --set calib_b=%.4f%s", res.Fit.A, res.Fit.B, uth)
	if res.KOffline > 0 {
		fmt.Fprintf(stdout, " --set k=%d", res.KOffline)
	}
	fmt.Fprintln(stdout)
}

// uthAdvice is calibrate's u_th for the "use:" line (" --set u_th=…", or
// "" when there is none to give) and, when Theorem 1's risk-prone
// threshold cannot serve, a line that says why. u-hlm uploads a draft
// whose uncertainty u ∈ [0, 1] exceeds u_th: a threshold of 1 or more
// never uploads, one of 0 or less uploads every draft.
func uthAdvice(degenerate bool, riskProne float64) (uth, note string) {
	switch {
	case degenerate:
		return "", ""
	case riskProne > 0 && riskProne < 1:
		return fmt.Sprintf(" --set u_th=%.4f", riskProne), ""
	}
	what := "u-hlm would never upload with it (u ≤ 1)"
	if riskProne <= 0 {
		what = "u-hlm would upload every draft with it"
	}
	return "", fmt.Sprintf("u_th: Theorem 1's risk-prone threshold %.4f is outside (0, 1) for this pair: %s, so the line below leaves u_th out; choose one for the transmission rate you want (hlm sim --method u-hlm --set u_th=…)", riskProne, what)
}

// calibrationSource is what a calibration was made from: the pair, the
// prompts, the sampling and the analysis options.
type calibrationSource struct {
	LLM         string  `json:"llm"`
	SLM         string  `json:"slm"`
	Dataset     string  `json:"dataset"`
	Prompts     int     `json:"prompts"`
	MaxTokens   int     `json:"max_tokens"`
	Seed        uint64  `json:"seed"`
	Temperature float64 `json:"temperature"`
	Theta       float64 `json:"theta"`
	Density     string  `json:"density"`
	FitOn       string  `json:"fit_on"`
}
