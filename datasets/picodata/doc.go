// Package picodata is the dataset format of Study C (ML-KEM and ML-DSA on the
// RP2040). That is, the only code its runner (experiments/pico/picorun, with
// the host side in experiments/pico/picoboard) and its analysis
// (analysis/picostudy) share.
//
// A run folder data/pico/<run-id>/ holds meta.json, host-timings.csv.gz
// (HostTimingsFile: the same operations timed on the host CPU) and one
// folder per firmware image with
//
//   - serial.log (SerialLogFile): the board's UART bytes, verbatim, in the
//     serial line protocol (FormatLine, ParseLine; read whole by ReadRun);
//   - measurements.csv.gz (MeasurementsFile): the measurements parsed from
//     it (EncodeMeasurements, DecodeMeasurements), which the analysis
//     requires to equal a fresh parse of the log;
//   - verify.json (VerifyFile): the host's checks of the device's test
//     vectors ([]Check);
//   - size.json (SizeFile): the image's memory footprint (SizeReport);
//   - image.json (ImageFile): the image's build provenance and run status.
//
// The package depends on the standard library only, so that a change to
// the firmware build, the emulator or the flashing code does not change
// the analysis stages' code version.
package picodata
